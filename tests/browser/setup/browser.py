"""Driving the set-up pages in Chromium like a coordinator: log in, collect page errors."""

from tests.corpus.world import PASSWORD


def open_as(chromium, live_server, username, viewport=(1280, 900)):
    page = chromium.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 500 else None)
    page.goto(f"{live_server.url}/accounts/login/")
    page.click("#id_username")
    page.keyboard.type(username)
    page.click("#id_password")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/")
    return page, errors
