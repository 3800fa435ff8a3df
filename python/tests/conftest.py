# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: every test starts from the default resource, and can ask for a fresh pool."""

import gc

import pytest

import rmm

#: What RMM's README prints for one 16-byte allocation through a StatisticsResourceAdaptor.
SEED_ALLOCATION_COUNTS = {
    "current_bytes": 16,
    "current_count": 1,
    "peak_bytes": 16,
    "peak_count": 1,
    "total_bytes": 16,
    "total_count": 1,
}


@pytest.fixture(autouse=True)
def default_resource():
    """Restores a plain CudaMemoryResource on the current device after each test."""
    yield
    gc.collect()
    rmm.mr.set_current_device_resource(rmm.mr.CudaMemoryResource())


@pytest.fixture
def pool():
    """A 64 MiB pool (growing to 256 MiB) set as the current resource."""
    mr = rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "64MiB", "256MiB")
    rmm.mr.set_current_device_resource(mr)
    return mr
