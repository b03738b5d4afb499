"""Coordinator dashboards: progress, agreement, scores, meta-evaluation (see urls.py)."""
