#!/usr/bin/Rscript
# Generates tests/data/run_model_df_reference.json: the Satterthwaite df of
# the contrast group 1 - group 0 for the cases of run_model_reference.json
# that have rounds, from lmerTest (Kuznetsova, Brockhoff & Christensen 2017),
# for kbench::stats::within_df (src/stats/run_model.cpp).
#
# Run with Debian 12's R and packages r-cran-lmertest, r-cran-jsonlite:
#   Rscript tests/data/make_run_model_df_reference.R > tests/data/run_model_df_reference.json
#
# The model is the run model with rounds nested in runs:
#   lmer(y ~ 0 + g + (1 | run) + (1 | round), REML = TRUE)   (rounds are
# numbered across runs, so (1 | round) is the round inside its run), without
# (1 | run) when there is one run; the df is contest(fit, L, ddf =
# "Satterthwaite")'s DenDF. Only cases whose contrast has no run part are
# kept (both sides in every run, balanced by round): compare tests the run
# part with the machine's pooled run df, not the row's own, so only the
# within-run df is comparable.
suppressMessages(library(jsonlite))
suppressMessages(library(lmerTest))
args <- commandArgs(trailingOnly = FALSE)
here <- dirname(sub("^--file=", "", args[grep("^--file=", args)]))
ref <- fromJSON(file.path(here, "run_model_reference.json"), simplifyVector = TRUE)
cases <- ref$cases
out <- list()
for (i in seq_len(nrow(cases))) {
  if (is.null(cases$round[[i]]) || !(cases$name[i] %in% c("rounds_one_run", "rounds_two_runs", "rounds_unbalanced"))) next
  d <- data.frame(y = cases$log_means[[i]], g = factor(cases$group[[i]]), run = factor(cases$run[[i]]),
                  round = factor(cases$round[[i]]))
  f <- if (nlevels(d$run) > 1) y ~ 0 + g + (1 | run) + (1 | round) else y ~ 0 + g + (1 | round)
  m <- lmer(f, data = d, REML = TRUE,
            control = lmerControl(optimizer = "bobyqa", optCtrl = list(rhobeg = 1e-3, rhoend = 1e-12)))
  L <- rep(0, nlevels(d$g))
  L[1] <- -1
  L[2] <- 1
  ct <- contest(m, L, ddf = "Satterthwaite")
  vc <- as.data.frame(VarCorr(m))
  out[[length(out) + 1]] <- list(name = cases$name[i], satterthwaite_df = ct$DenDF,
                                 round_variance = vc$vcov[vc$grp == "round"],
                                 session_variance = vc$vcov[vc$grp == "Residual"])
}
cat(toJSON(list(provenance = list(generator = "tests/data/make_run_model_df_reference.R",
                                  generated = format(Sys.time(), "%Y-%m-%dT%H:%M:%SZ", tz = "UTC"),
                                  R = paste(R.version$major, R.version$minor, sep = "."),
                                  lmerTest = as.character(packageVersion("lmerTest")),
                                  lme4 = as.character(packageVersion("lme4"))),
               cases = out), auto_unbox = TRUE, digits = NA, pretty = TRUE))
cat("\n")
