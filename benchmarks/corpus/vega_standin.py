"""An offline stand-in for ``vega_datasets.data`` (prepare.py puts it beside 02.06).

The handbook reads Seattle's daily weather through vega_datasets, which is not installed
here. This gives a table with the same columns the notebook uses (``date``,
``precipitation`` in mm), 2012-2015, drawn once from a fixed seed with plain Python:
dry days about half the time, wet days with an exponential amount. The numbers are not
Seattle's; every run gives the same ones.
"""

from __future__ import annotations

import random


def seattle_weather():
    import pandas as pd

    dates = pd.date_range("2012-01-01", "2015-12-31", freq="D")
    draw = random.Random(2015)
    rain = [round(draw.expovariate(1 / 6.0), 1) if draw.random() < 0.45 else 0.0 for _ in dates]
    return pd.DataFrame({"date": dates, "precipitation": rain})
