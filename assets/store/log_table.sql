CREATE TABLE log (
                      id          {id},
                      kind        {name} NOT NULL,
                      name        {name} NOT NULL,
                      created_utc {name} NOT NULL,
                      text        TEXT NOT NULL
                    )