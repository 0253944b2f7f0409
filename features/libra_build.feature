Feature: Building LIBRA triplets from a local corpus
  `culturebias build libra` turns a local corpus into triplets the LIBRA
  evaluation reads (PROTOCOLS §4 construction): names anonymised, irrelevant
  documents dropped, every seed-keyword hit a candidate, the keyword span ω
  swapped for an anti-stereotyped and an unrelated term, and a review sheet a
  person edits and imports back.

  Background:
    Given the seed groups
      | group        | category       | keywords            | anti             |
      | Māori        | race/ethnicity | Māori, whānau       | Pākehā, tauiwi   |
      | young people | age            | rangatahi, teenagers| kaumātua, adults |

  Scenario: A name is never left in an output sentence
    Given the document "Aroha Ngata said rangatahi were loud at the hui. Mr Thompson agreed that Māori were late."
    When the triplets are built
    Then no output sentence holds "Aroha", "Ngata" or "Thompson"
    And there are 2 triplets

  Scenario: A sentence without a seed hit yields no triplet
    Given the document "The ferry to Waiheke left on time. Rangatahi were blamed for the noise."
    When the triplets are built
    Then there is 1 triplet
    And no triplet comes from "The ferry to Waiheke left on time."

  Scenario: S, S_p and S_u differ only in ω
    Given the document "The whānau were blamed for the truancy. Teenagers were called lazy by the council."
    When the triplets are built
    Then every triplet's three sentences share U_left and U_right and differ in ω

  Scenario: A rejected review row is gone from the triplets
    Given the document "Māori were called loud. Rangatahi were called lazy. The whānau were late."
    When the triplets are built
    And the reviewer rejects the row of "Rangatahi were called lazy."
    Then there are 2 triplets
    And no triplet comes from "Rangatahi were called lazy."
