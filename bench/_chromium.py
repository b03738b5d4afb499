"""The flags every headless Chromium of the project runs with: the test suite's (tests/conftest.py)
and the browser benchmarks' (bench/_browser.py)."""

# The features Playwright's launch disables (its chromiumSwitches). Chromium reads only the last
# --disable-features of its command line, which is ours, so ours repeats them
# (tests/foundation/test_browser_flags.py fails if a Playwright upgrade disables one this list lacks).
PLAYWRIGHT_DISABLED_FEATURES = [
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
]
# For every new page Chromium started two more renderers than the page's own: one for the omnibox's
# WebUI popups (never shown headless) and a spare one for the next site. Without them a new page costs
# about half the CPU (0.40 -> 0.21 CPU-s; docs/results/test_suite.md).
UNUSED_HEADLESS_FEATURES = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "SpareRendererForSitePerProcess"]


def chromium_flags(disable: tuple[str, ...] = (), keep: tuple[str, ...] = ()) -> list[str]:
    """The command-line flags, with the features of ``disable`` turned off beside the usual ones (a
    second --disable-features flag would replace the first, not add to it), and those of ``keep`` left
    as Chromium ships them although Playwright turns them off."""
    disabled = [f for f in PLAYWRIGHT_DISABLED_FEATURES if f not in keep] + UNUSED_HEADLESS_FEATURES + list(disable)
    return [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-features=" + ",".join(disabled),
    ]


CHROMIUM_FLAGS = chromium_flags()
