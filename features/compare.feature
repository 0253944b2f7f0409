Feature: Comparing runs of models
  `culturebias compare` reads finished runs and tests the differences between
  the models. For KoBBQ the Wilcoxon rank-sum test (two-sided) compares two
  models' per-template scores, marked *** at p < .01, ** at .05, * at .1
  (the marks of the paper's Table 4, which tests two data sets); Tukey's HSD compares the models' normalised diff-bias at a
  99% family-wise level (paper Figs. 3–4). Runs on different data are not
  compared unless a data mismatch is allowed, and then the comparison says so.

  Background:
    Given the first 400 items of the bundled KoBBQ test split, asked under prompts "1,2"

  Scenario: Two runs of identical answers show no significant difference
    Given a run of a model "first" that always answers with the biased option
    And a run of a model "second" that always answers with the biased option
    When the runs are compared
    Then no Wilcoxon rank-sum test between "first" and "second" is significant at .1
    And every Wilcoxon p-value between "first" and "second" is 1
    And Tukey's HSD finds no difference between "first" and "second" at 99%

  Scenario: An always-biased model against an always-unknown one is significant at .01
    Given a run of a model "stereotyper" that always answers with the biased option
    And a run of a model "abstainer" that always answers with the unknown option
    When the runs are compared
    Then the Wilcoxon rank-sum test of "diff_bias_amb" between "stereotyper" and "abstainer" has p < .01 and the mark "***"
    And the Wilcoxon rank-sum test of "acc_amb" between "stereotyper" and "abstainer" has p < .01 and the mark "***"
    And Tukey's HSD separates "stereotyper" and "abstainer" on normalised "diff_bias_amb" at 99%
    And the normalised "diff_bias_amb" means are 1 for "stereotyper" and 0 for "abstainer"

  Scenario: A comparison of different data fingerprints is refused
    Given a run of a model "stereotyper" that always answers with the biased option
    And a run of a model "abstainer" that always answers with the unknown option, on the same items handed over in memory
    When the runs are compared
    Then the comparison is refused naming the run of "abstainer", its data fingerprint and the other run's
    When the runs are compared with a data mismatch allowed
    Then the comparison says that the data differ
