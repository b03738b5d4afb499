"""``scipy.stats``, imported on first use.

Importing it takes 1-2 s of CPU (its distributions are built at import), and every Django process
imports the scoring modules through the URL configuration and the tasks: each worker, beat,
management command and web worker paid it at start whether or not it ever computed an interval or a
test. The processes that compute them pay it once, on the first.
"""


def stats():
    from scipy import stats as module

    return module
