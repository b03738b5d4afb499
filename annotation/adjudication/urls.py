"""The adjudication's action on the assignment resource (by basename; the router is assembled in
``pyramid_app/api_urls.py``)."""

from annotation.adjudication import api

extends = {"assignment": [api.AssignmentCarryOver]}
