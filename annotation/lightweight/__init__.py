"""The lightweight-pyramid protocol (Shapira et al. 2019): runs, statements, crowd links and
platforms (MTurk, Prolific), holds and submissions, completion codes, worker privacy, imports
of released data, scores and their tasks, and the run's API.
"""
