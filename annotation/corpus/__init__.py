"""The texts a study rests on and the people who work on them: datasets, topics, reference and
peer summaries, annotator accounts, their roles and invitations, and assignments; their REST
resources (serializers, views, filters, routes).
"""
