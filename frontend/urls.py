from django.urls import path

from . import views

app_name = "frontend"
urlpatterns = [
    path("", views.home, name="home"),
    path("assignments/<int:pk>/open/", views.open_assignment, name="open-assignment"),
    path("assignments/<int:pk>/done/", views.finish_assignment, name="finish-assignment"),
    path("pyramids/<int:pk>/build/", views.builder, name="builder"),
    path("pyramids/<int:pk>/scus/", views.pyramid_scus, name="pyramid-scus"),
    path("annotations/<int:pk>/", views.annotator, name="annotator"),
    path("assignments/<int:pk>/peers/<int:peer>/", views.annotator_peer, name="annotator-peer"),
    path("assignments/<int:pk>/peers/<int:peer>/carry-over/", views.carry_over, name="carry-over"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
]
