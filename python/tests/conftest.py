"""Shared fixtures: every test starts from the default resource, and can ask for a fresh pool."""

import gc

import pytest

import rmm


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
