Feature: Uncertainty of every headline metric
  Every headline metric of a run carries a 95% bootstrap confidence interval
  over its resampling units (scipy.stats.bootstrap, seeded by the run's seed),
  which names the unit and how many units the metric is computed over. The
  interval of a statistic that cannot vary is the point itself, unless the
  metric is a proportion or a difference of proportions: then a score interval
  over its units (Wilson, Newcombe) says how far n allows it to be. A metric
  that is undefined has no interval, with the reason beside it.

  Scenario: An interval over identical items has zero width
    Given 50 items that all score 0.25
    When the 95% bootstrap interval of their mean is computed with seed 0
    Then the interval is [0.25, 0.25]
    And the interval says its width is zero, over 50 "item"s

  Scenario: The same seed gives the same interval
    Given 40 items drawn from a normal distribution with mean 3 and standard deviation 2
    When the 95% bootstrap interval of their mean is computed with seed 7
    And the 95% bootstrap interval of their mean is computed again with seed 7
    Then both intervals are the same
    And the interval contains the sample mean

  Scenario: An undefined metric has no interval and says why
    Given no items
    When the 95% bootstrap interval of their mean is computed with seed 0
    Then the interval has no bounds and a note

  Scenario: A KoBBQ model that always gives the biased answer has score intervals at the edges
    Given a KoBBQ run of a model that always answers with the biased option, on the first 60 items
    Then the interval of "acc_amb" is a Wilson interval from 0 over the run's templates
    And the interval of "diff_bias_amb" is a Newcombe-paired interval up to 1 over the run's templates
    And the interval of "diff_bias_dis" is a Newcombe interval up to 1 over the run's templates

  Scenario: A KoBBQ model that answers at random has intervals around its scores
    Given a KoBBQ run of a model that always answers with the random option, on the first 200 items
    Then every headline interval contains its metric and has a positive width
    And the report shows every headline interval and its n
