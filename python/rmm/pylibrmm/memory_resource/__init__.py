# SPDX-License-Identifier: Apache-2.0
"""Same as rmm.mr."""

from rmm.mr import *  # noqa: F401,F403
from rmm.mr import __all__  # noqa: F401
