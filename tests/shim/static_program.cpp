// SPDX-License-Identifier: Apache-2.0
// A statically linked program: the dynamic loader never runs for it, so no preload reaches it.
// rmm-run warns about such programs.
int main() { return 0; }
