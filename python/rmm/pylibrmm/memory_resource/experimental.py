# SPDX-License-Identifier: Apache-2.0
"""Same as rmm.mr.experimental."""

from rmm.mr.experimental import *  # noqa: F401,F403
from rmm.mr.experimental import __all__  # noqa: F401
