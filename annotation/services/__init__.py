"""Use cases of the annotation app; views, commands and tasks call these, never the ORM directly."""
