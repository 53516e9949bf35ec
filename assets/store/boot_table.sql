CREATE TABLE boot (
                      id           {id},
                      sut          {name} NOT NULL,
                      swprofile    {name} NOT NULL,
                      plan_key     {name} NOT NULL,
                      run          {name} NOT NULL,
                      plan_session INTEGER NOT NULL,
                      number       INTEGER NOT NULL,
                      method       TEXT NOT NULL,
                      started_at   TEXT NOT NULL,
                      seconds      {real} NOT NULL,
                      ok           INTEGER NOT NULL CHECK (ok IN (0, 1)),
                      power_cycled INTEGER NOT NULL CHECK (power_cycled IN (0, 1)),
                      release      TEXT NOT NULL,
                      reason       TEXT NOT NULL,
                      console_tail TEXT NOT NULL,
                      session_id   {int64} REFERENCES session(id) ON DELETE SET NULL
                    )