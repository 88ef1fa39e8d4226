// SPDX-License-Identifier: MIT
/*
 * Preloaded into Debian's linux.uml (6.1) on hosts whose CPUs have more XSAVE state than
 * AVX (AVX-512, AMX, PKRU, MPX). Part of pytest-hwcrypto; see boards/uml_xstate.py.
 *
 * UML saves and restores a guest process's FPU registers with PTRACE_GETREGSET /
 * PTRACE_SETREGSET (NT_X86_XSTATE) using a buffer sized for x87+SSE+AVX (832 bytes).
 * The host kernel truncates a short GETREGSET, but refuses a SETREGSET that is not the
 * full XSAVE size with EFAULT, and UML then kills the guest's init ("ptrace set fp regs
 * failed, errno = 14"). Here a short SETREGSET is completed: the tracee's current full
 * state is read, UML's part is laid over its start, and the whole buffer is written.
 * Everything else goes to the kernel unchanged.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Larger than any XSAVE area so far (AMX makes it ~11 KiB). UML runs one CPU, and it
 * issues ptrace from one thread, so one buffer serves every call. */
static unsigned char whole_state[64 * 1024];

static long raw_ptrace(long request, long pid, void *addr, void *data)
{
	return syscall(SYS_ptrace, request, pid, addr, data);
}

long ptrace(enum __ptrace_request request, ...)
{
	va_list args;
	va_start(args, request);
	pid_t pid = va_arg(args, pid_t);
	void *addr = va_arg(args, void *);
	void *data = va_arg(args, void *);
	va_end(args);

	if (request == PTRACE_SETREGSET && (long)addr == NT_X86_XSTATE) {
		struct iovec *given = data;
		struct iovec whole = { whole_state, sizeof(whole_state) };
		if (raw_ptrace(PTRACE_GETREGSET, pid, addr, &whole) == 0 &&
		    given->iov_len < whole.iov_len) {
			memcpy(whole_state, given->iov_base, given->iov_len);
			return raw_ptrace(PTRACE_SETREGSET, pid, addr, &whole);
		}
	}
	if (request == PTRACE_PEEKTEXT || request == PTRACE_PEEKDATA ||
	    request == PTRACE_PEEKUSER) {
		/* glibc's calling convention: the word is the return value, errno 0 on success. */
		long word;
		if (raw_ptrace(request, pid, addr, &word) < 0)
			return -1;
		errno = 0;
		return word;
	}
	return raw_ptrace(request, pid, addr, data);
}
