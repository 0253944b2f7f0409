Feature: Repeated runs report every repeat's headline metrics and their mean ± std
  run.repeats=N executes a run N times in one run id; repeat i samples with seed + i
  (PROTOCOLS §3 run protocol: four runs, mean ± std). A greedy reply does not depend
  on the seed, so greedy repeats reuse the first repeat's replies and agree exactly.

  Background:
    Given a BEI in category "gender" with words "甲，乙，丙" and human severity 6
    And a model that rates severity with the last digit of its sampling seed

  Scenario: A McBE run with four repeats reports std 0 for greedy decoding
    When McBE runs the tasks "bs" with 4 repeats and greedy decoding
    Then the summary lists 4 repeats with seeds 0, 1, 2 and 3
    And the headline "overall" is 40 ± 0 over 4 repeats
    And the model was asked 1 question

  Scenario: A sampled McBE run's repeats use seeds s, s+1, ... and differ
    When McBE runs the tasks "bs" with 4 repeats sampling at temperature 0.7 with seed 12
    Then the repeats sampled with seeds 12, 13, 14 and 15
    And the headline "overall" of the repeats is 60, 70, 80 and 90
    And the headline "overall" is 75 ± 12.9099 over 4 repeats
    And the model was asked 4 questions
    And the summary's metrics are those of the first repeat

  Scenario: With repeats every McBE score is a mean ± std over the runs
    Given a BEI in category "region" with words "甲，乙" and human severity 2
    When McBE runs the tasks "bs" with 4 repeats sampling at temperature 0.7 with seed 12
    Then the "bs" score of "gender" over the runs is 75 ± 12.9099
    And the "bs" score of "region" over the runs is 85 ± 12.9099
    And the "bs" task score over the runs is 80 ± 0
    And the overall score over the runs is 80 ± 0
    And the report shows "75.00 ± 12.91" for "gender"
