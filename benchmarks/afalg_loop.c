// SPDX-License-Identifier: MIT
/*
 * afalg_loop: the reference C loop for the harness-fidelity benchmark.
 *
 * What an efficient C user of AF_ALG does for one request: one sendmsg() carrying the
 * operation and the IV as control messages plus the data, then one read() of the result
 * (for hashes: sendmsg() of the data, read() of the digest). It runs COUNT requests on one
 * bound and keyed socket and prints how long they took, so the Python benchmark driver can
 * interleave it with the plugin's own samples on the same driver in the same board boot.
 *
 *   afalg_loop skcipher|hash DRIVER KEY_BYTES BLOCK_SIZE COUNT [encrypt|decrypt]
 *   -> "ops=N bytes=N seconds=F"
 *
 * Built at run time by run_fidelity.py with: gcc -O2 -Wall -o afalg_loop afalg_loop.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

#define IV_BYTES 16

static void die(const char *what)
{
	fprintf(stderr, "afalg_loop: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One sendmsg with ALG_SET_OP and ALG_SET_IV control messages and the data. */
static void send_skcipher_request(int op_fd, int direction, unsigned char *data, size_t len)
{
	char control[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct af_alg_iv) + IV_BYTES)];
	struct iovec iov = { .iov_base = data, .iov_len = len };
	struct msghdr msg = { 0 };
	struct cmsghdr *cmsg;
	struct af_alg_iv *iv;

	memset(control, 0, sizeof(control));
	msg.msg_control = control;
	msg.msg_controllen = sizeof(control);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;

	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_ALG;
	cmsg->cmsg_type = ALG_SET_OP;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	*(int *)CMSG_DATA(cmsg) = direction;

	cmsg = CMSG_NXTHDR(&msg, cmsg);
	cmsg->cmsg_level = SOL_ALG;
	cmsg->cmsg_type = ALG_SET_IV;
	cmsg->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + IV_BYTES);
	iv = (struct af_alg_iv *)CMSG_DATA(cmsg);
	iv->ivlen = IV_BYTES;
	memset(iv->iv, 0x42, IV_BYTES);

	if (sendmsg(op_fd, &msg, 0) != (ssize_t)len)
		die("sendmsg");
}

int main(int argc, char **argv)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	unsigned char key[64];
	unsigned char *data, *out;
	size_t key_bytes, block_size, out_len;
	long count, i;
	int tfm_fd, op_fd, hash, direction = ALG_OP_ENCRYPT;
	double started, seconds;

	if (argc < 6) {
		fprintf(stderr, "usage: %s skcipher|hash DRIVER KEY_BYTES BLOCK_SIZE COUNT "
			"[encrypt|decrypt]\n", argv[0]);
		return 2;
	}
	hash = strcmp(argv[1], "hash") == 0;
	key_bytes = strtoul(argv[3], NULL, 0);
	block_size = strtoul(argv[4], NULL, 0);
	count = strtol(argv[5], NULL, 0);
	if (argc > 6 && strcmp(argv[6], "decrypt") == 0)
		direction = ALG_OP_DECRYPT;
	if (key_bytes > sizeof(key) || block_size == 0 || count <= 0) {
		fprintf(stderr, "afalg_loop: bad arguments\n");
		return 2;
	}

	strncpy((char *)sa.salg_type, argv[1], sizeof(sa.salg_type) - 1);
	strncpy((char *)sa.salg_name, argv[2], sizeof(sa.salg_name) - 1);
	tfm_fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
	if (tfm_fd < 0)
		die("socket(AF_ALG)");
	if (bind(tfm_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind");
	for (i = 0; i < (long)key_bytes; i++)
		key[i] = (unsigned char)(i * 7 + 1);  /* distinct halves: xts refuses equal ones */
	if (key_bytes && setsockopt(tfm_fd, SOL_ALG, ALG_SET_KEY, key, key_bytes) < 0)
		die("setsockopt(ALG_SET_KEY)");
	op_fd = accept(tfm_fd, NULL, 0);
	if (op_fd < 0)
		die("accept");

	/* page-aligned buffers, as the plugin uses, so both map the same number of pages */
	out_len = hash ? 64 : block_size;
	data = mmap(NULL, block_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	out = mmap(NULL, out_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (data == MAP_FAILED || out == MAP_FAILED)
		die("mmap");
	memset(data, 0x5a, block_size);

	started = now();
	for (i = 0; i < count; i++) {
		if (hash) {
			if (send(op_fd, data, block_size, 0) != (ssize_t)block_size)
				die("send");
		} else {
			send_skcipher_request(op_fd, direction, data, block_size);
		}
		if (read(op_fd, out, out_len) <= 0)
			die("read");
	}
	seconds = now() - started;
	printf("ops=%ld bytes=%lu seconds=%.9f\n", count, (unsigned long)(count * block_size),
	       seconds);
	return 0;
}
