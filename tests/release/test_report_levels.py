"""The report matches synthetic values to the domain's levels the way the front door does."""

import numpy as np
import pandas as pd

from privgraph.data.domain import Domain, Kind
from privgraph.release.levels import identity_levels
from privgraph.release.report import _proportions


def test_float_values_of_integral_levels_are_counted():
    # A real table's integer levels (22, 27) come back from pandas as 22.0, 27.0, and a
    # level 17.5 stays 17.5: the report crashed here after the spend ("only int indices").
    domain = Domain(("age",), (3,), (Kind.ORDINAL,), ((17.5, 22, 27),), (None,))
    frame = pd.DataFrame({"age": [22.0, 27.0, 27.0, 17.5]})
    np.testing.assert_allclose(_proportions(frame, identity_levels(domain), ("age",)), [0.25, 0.25, 0.5])
