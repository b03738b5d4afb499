"""The access rule of lightweight pyramids, registered with ``annotation.access.rules`` (a layer
below): runs, their statements and tasks belong to the dataset's coordinators only (crowd workers
never log in: a crowd link's token opens its own work, ``lightweight.work``).
"""

from annotation.access.rules import Rule, can_change, register
from annotation.lightweight.models import LightweightPyramid, LiteStatement, LiteTask

register(
    LightweightPyramid,
    Rule("coordinated", None, "dataset"),
    create=lambda user, data: can_change(user, data["dataset"]),
)
register(LiteStatement, Rule("coordinated", "topic", "pyramid__dataset"))
register(LiteTask, Rule("coordinated", "topic", "pyramid__dataset"))
