// SPDX-License-Identifier: Apache-2.0
/* The exported dlsym. RTLD_NEXT lookups jump (not call) to glibc's dlsym, which finds "next" from
 * its caller's return address: a jump leaves the program's return address in place, so they behave
 * exactly as without the shim. Every other lookup goes to rmm_shim_dlsym (dlsym_hook.cpp). */

#if defined(__x86_64__)
        .text
        .globl  dlsym
        .type   dlsym, @function
dlsym:
        .cfi_startproc
        cmpq    $-1, %rdi                       /* RTLD_NEXT */
        je      1f
        jmp     rmm_shim_dlsym
1:      movq    rmm_shim_real_dlsym(%rip), %rax
        testq   %rax, %rax
        jz      2f
        jmp     *%rax
2:      jmp     rmm_shim_dlsym_next_early
        .cfi_endproc
        .size   dlsym, .-dlsym
#elif defined(__aarch64__)
        .text
        .globl  dlsym
        .type   dlsym, %function
dlsym:
        .cfi_startproc
        cmn     x0, #1                          /* RTLD_NEXT */
        b.eq    1f
        b       rmm_shim_dlsym
1:      adrp    x16, rmm_shim_real_dlsym
        ldr     x16, [x16, :lo12:rmm_shim_real_dlsym]
        cbz     x16, 2f
        br      x16
2:      b       rmm_shim_dlsym_next_early
        .cfi_endproc
        .size   dlsym, .-dlsym
#else
#error "dlsym_entry.S: add this processor's two-instruction dispatch"
#endif
        .section .note.GNU-stack,"",%progbits
