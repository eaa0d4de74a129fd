"""loadtower: a terminal orchestrator for NoSQL benchmarks with live monitoring."""

import warnings

__version__ = "0.1.0"

# urllib3 warns, when something imports its SOCKS support before `requests` has silenced
# that (requests' adapters try it; locust and prometheus-api-client bring requests), that
# PySocks is missing. loadtower never uses a SOCKS proxy: a fresh install printed it
# mid-run (issue 31). Filtered by its text, so urllib3 is not imported here.
warnings.filterwarnings("ignore", message="SOCKS support in urllib3 requires")
