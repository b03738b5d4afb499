from django.urls import path

app_name = "dashboards"
urlpatterns: list = []
