# SPDX-License-Identifier: Apache-2.0
"""The package's version, and the commit of the library it was built from ("" outside a git clone)."""

from rmm._rmm import _git_commit

__version__ = "0.1.0"
__git_commit__ = _git_commit
