"""The REST API (Django REST framework): the router, and the editing API over corpus, pyramids and
peers (serializers, viewsets, editing actions, filters, ETags and If-Match, Idempotency-Key,
throttles, renderers); ``lightweight.api`` and ``transfer.api`` hold their concepts' own views.
"""
