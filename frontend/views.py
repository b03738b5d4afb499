"""Pages. Every page requires a login; the health check is the only public URL."""
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import render

from annotation.models import Assignment, Dataset


@login_required
def home(request):
    """The user's start page: their assignments, and the datasets they coordinate."""
    assignments = Assignment.objects.filter(annotator=request.user).select_related("topic__dataset")
    datasets = Dataset.objects.all() if request.user.is_superuser else request.user.coordinated_datasets.all()
    return render(request, "frontend/home.html", {"assignments": assignments, "datasets": datasets})


def healthz(request):
    """Liveness for docker-compose and load balancers: the process is up and the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
