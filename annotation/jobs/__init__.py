"""The one background path: services publish work by name (``queue``), a thread runs it in-process
without Redis or sends the Celery task with it (``runner``), a task never runs twice at once
(``task_lock``), and the health probe.
"""
