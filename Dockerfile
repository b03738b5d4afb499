# The browser libraries the app serves (package.json, pinned by package-lock.json): npm in a stage of
# its own, only node_modules goes into the image (without the linter, a development dependency).
FROM node:20-slim AS vendor
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# pg_dump and pg_restore for `manage.py backup` / `restore` (docs/backup.md); Debian's are as new as the server or newer.
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-client && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY pyramid_app pyramid_app
COPY annotation annotation
COPY scoring scoring
COPY frontend frontend
COPY manage.py ./
COPY --from=vendor /app/node_modules node_modules
RUN pip install --no-cache-dir . && DEBUG=0 SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "pyramid_app.wsgi", "-c", "pyramid_app/gunicorn_conf.py", "--bind", "0.0.0.0:8000"]
