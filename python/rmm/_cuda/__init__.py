# SPDX-License-Identifier: Apache-2.0
"""CUDA helpers of RMM's Python package that RAPIDS code imports (``from rmm._cuda import gpu``)."""
