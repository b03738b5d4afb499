"""What coordinators read: the figures of the dashboards (scores, agreement, statistics,
meta-evaluation against imported judgments), stored as snapshots recomputed in the background.
"""
