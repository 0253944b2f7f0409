"""Application services: one per benchmark protocol, plus run orchestration. Talks only to ports."""
