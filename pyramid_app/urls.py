from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from frontend.setup.views import Invitation

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("pyramid_app.api_urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/invite/<uidb64>/<token>/", Invitation.as_view(), name="invitation"),
    path("datasets/", include("frontend.dashboards.urls")),
    path("setup/", include("frontend.setup.urls")),
    path("lightweight/", include("frontend.lightweight.urls")),
    path("", include("frontend.urls")),
]
# Errors in the app's layout with their reason (frontend/templates/403.html, 404.html, 400.html).
handler400 = "frontend.views.bad_request"
