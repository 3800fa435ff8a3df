# SPDX-License-Identifier: Apache-2.0
"""A fixed set of CUDA streams handed out round-robin (rmm::cuda_stream_pool)."""

from rmm._rmm import CudaStreamPool

__all__ = ["CudaStreamPool"]
