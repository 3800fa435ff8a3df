# SPDX-License-Identifier: Apache-2.0
"""Allocators that route CuPy, Numba and PyTorch device allocations to rmm's current resource."""
