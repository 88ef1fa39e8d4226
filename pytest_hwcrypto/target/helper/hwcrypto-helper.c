// SPDX-License-Identifier: MIT
/*
 * hwcrypto-helper: the board side of a host-driven pytest-hwcrypto run.
 *
 * A board without Python gets this one static program; the host builds it for the board's
 * architecture, uploads it, runs it through the transport and removes it afterwards.
 * It does only the syscalls; inputs come from the host, judging stays on the host.
 *
 *   hwcrypto-helper hash NAME [--binary]                 < data    digest of stdin
 *   hwcrypto-helper skcipher NAME enc|dec KEY IV [--binary] < data  stdin through the cipher
 *   hwcrypto-helper batch [FILE]      one request a line (default stdin), one answer a line:
 *       hash NAME DATA                  ->  ok DIGEST
 *       hash NAME KEY DATA              ->  ok DIGEST  (a keyed hash: hmac, cmac)
 *       skcipher NAME enc|dec KEY IV DATA ->  ok OUTPUT
 *     every field in hex ("-" for empty); a failed request answers "error ERRNO WHAT"
 *   hwcrypto-helper speed hash|skcipher NAME BYTES SECONDS [KEY [IV]]
 *       one request of BYTES at a time (one request in flight) for SECONDS (a decimal),
 *       printing "bound NAME BEFORE AFTER" first (the /proc/crypto refcnt of the driver
 *       NAME before the bind and once the request socket is open, -1 where not listed),
 *       then "sample OPS BYTES NANOSECONDS" per interval and "done OPS BYTES NANOSECONDS"
 *
 * Exit status: 0 done, 1 a request failed (one-shot), 2 usage, 3 AF_ALG unavailable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_alg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

#define SAMPLE_NS 250000000LL /* one sample line per quarter second */
#define MAX_DIGEST 64

static const char *program = "hwcrypto-helper";

static void usage(void)
{
	fprintf(stderr,
		"usage: %s hash NAME [--binary] | skcipher NAME enc|dec KEY IV [--binary] | "
		"batch [FILE] | speed hash|skcipher NAME BYTES SECONDS [KEY [IV]]\n",
		program);
	exit(2);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode hex ("-" is empty) into a new buffer; -1 on a malformed field. */
static ssize_t unhex(const char *text, unsigned char **out)
{
	size_t length = strcmp(text, "-") == 0 ? 0 : strlen(text);
	size_t i;

	if (length % 2)
		return -1;
	*out = malloc(length / 2 + 1);
	if (!*out)
		return -1;
	for (i = 0; i < length / 2; i++) {
		int high = hex_value((unsigned char)text[2 * i]);
		int low = hex_value((unsigned char)text[2 * i + 1]);

		if (high < 0 || low < 0) {
			free(*out);
			*out = NULL;
			return -1;
		}
		(*out)[i] = (unsigned char)(high << 4 | low);
	}
	return (ssize_t)(length / 2);
}

static void print_hex(FILE *stream, const unsigned char *data, size_t length)
{
	size_t i;

	if (!length)
		fputc('-', stream);
	for (i = 0; i < length; i++)
		fprintf(stream, "%02x", data[i]);
}

/* A transform socket bound to NAME, with KEY set when given; -errno on failure. */
static int bind_transform(const char *type, const char *name, const unsigned char *key,
			  size_t key_length)
{
	struct sockaddr_alg address = { .salg_family = AF_ALG };
	int tfm = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (tfm < 0)
		return -errno;
	snprintf((char *)address.salg_type, sizeof(address.salg_type), "%s", type);
	snprintf((char *)address.salg_name, sizeof(address.salg_name), "%s", name);
	if (bind(tfm, (struct sockaddr *)&address, sizeof(address)) < 0 ||
	    (key && setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, (socklen_t)key_length) < 0)) {
		int saved = errno;

		close(tfm);
		return -saved;
	}
	return tfm;
}

/*
 * Room for one request of `length` bytes in the socket's buffers. AF_ALG takes a send only
 * while a page of send buffer is free and hands the cipher at most the receive buffer's
 * worth at a time: a request larger than either is split into several, each costing a
 * round through the kernel; the Python engine sizes its buffers the same way
 * (kernel/afalg/wire.py), and the two are compared in benchmarks/target-fidelity.md.
 * As root the FORCE variants pass net.core.[rw]mem_max. Failures leave the defaults.
 */
static void fit_buffers(int op, size_t length)
{
	int wanted = (int)(length + 4 * 4096);
	const int options[][2] = { { SO_SNDBUF, SO_SNDBUFFORCE }, { SO_RCVBUF, SO_RCVBUFFORCE } };
	size_t i;

	for (i = 0; i < 2; i++) {
		int have = 0;
		socklen_t size = sizeof(have);

		if (getsockopt(op, SOL_SOCKET, options[i][0], &have, &size) == 0 && have >= wanted)
			continue;
		setsockopt(op, SOL_SOCKET, options[i][0], &wanted, sizeof(wanted));
		size = sizeof(have);
		if (getsockopt(op, SOL_SOCKET, options[i][0], &have, &size) == 0 && have < wanted)
			setsockopt(op, SOL_SOCKET, options[i][1], &wanted, sizeof(wanted));
	}
}

/*
 * The refcnt /proc/crypto gives the entry whose driver is `driver`; -1 where none is listed.
 * Read around the bind, it proves which driver served: the kernel takes a reference on the
 * algorithm the transform was allocated from (the in-board engine proves it the same way).
 */
static long refcnt_of(const char *driver)
{
	FILE *listing = fopen("/proc/crypto", "r");
	char line[256], value[200];
	int ours = 0;
	long refcnt = -1;

	if (!listing)
		return -1;
	while (fgets(line, sizeof(line), listing)) {
		if (line[0] == '\n')
			ours = 0;
		else if (sscanf(line, "driver : %199s", value) == 1)
			ours = strcmp(value, driver) == 0;
		else if (ours && sscanf(line, "refcnt : %ld", &refcnt) == 1)
			break;
	}
	fclose(listing);
	return ours ? refcnt : -1;
}

static int open_request(int tfm, size_t length)
{
	int op = accept4(tfm, NULL, NULL, SOCK_CLOEXEC);

	if (op < 0)
		return -errno;
	fit_buffers(op, length);
	return op;
}

/* Read until `length` bytes came or the socket has no more; -errno on failure. */
static ssize_t read_all(int fd, unsigned char *buffer, size_t length)
{
	size_t done = 0;

	while (done < length) {
		ssize_t got = read(fd, buffer + done, length - done);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		done += (size_t)got;
	}
	return (ssize_t)done;
}

/* One hash request on an op socket: DATA in, digest out. */
static ssize_t hash_request(int op, const unsigned char *data, size_t length,
			    unsigned char *digest)
{
	ssize_t got;

	if (send(op, data, length, 0) < 0)
		return -errno;
	got = read(op, digest, MAX_DIGEST);
	return got < 0 ? -errno : got;
}

/* One skcipher request: the operation and IV as control messages, DATA in, OUT out. */
static ssize_t cipher_request(int op, int encrypt, const unsigned char *iv, size_t iv_length,
			      const unsigned char *data, size_t length, unsigned char *out)
{
	char control[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 64)];
	struct msghdr message = { 0 };
	struct iovec vector = { .iov_base = (void *)data, .iov_len = length };
	struct cmsghdr *header;
	struct af_alg_iv *alg_iv;

	if (iv_length > 64)
		return -EINVAL;
	memset(control, 0, sizeof(control));
	message.msg_control = control;
	message.msg_controllen = CMSG_SPACE(sizeof(uint32_t)) +
				 (iv_length ? CMSG_SPACE(sizeof(struct af_alg_iv) + iv_length) : 0);
	message.msg_iov = &vector;
	message.msg_iovlen = 1;
	header = CMSG_FIRSTHDR(&message);
	header->cmsg_level = SOL_ALG;
	header->cmsg_type = ALG_SET_OP;
	header->cmsg_len = CMSG_LEN(sizeof(uint32_t));
	*(uint32_t *)CMSG_DATA(header) = encrypt ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	if (iv_length) {
		header = CMSG_NXTHDR(&message, header);
		header->cmsg_level = SOL_ALG;
		header->cmsg_type = ALG_SET_IV;
		header->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + iv_length);
		alg_iv = (struct af_alg_iv *)CMSG_DATA(header);
		alg_iv->ivlen = (uint32_t)iv_length;
		memcpy(alg_iv->iv, iv, iv_length);
	}
	if (sendmsg(op, &message, 0) < 0)
		return -errno;
	return read_all(op, out, length);
}

static unsigned char *read_stream(FILE *stream, size_t *length)
{
	size_t capacity = 65536, used = 0, got;
	unsigned char *buffer = malloc(capacity);

	while (buffer && (got = fread(buffer + used, 1, capacity - used, stream)) > 0) {
		used += got;
		if (used == capacity) {
			unsigned char *bigger = realloc(buffer, capacity *= 2);

			if (!bigger)
				free(buffer);
			buffer = bigger;
		}
	}
	*length = used;
	return buffer;
}

static int fail(const char *what, int error)
{
	fprintf(stderr, "%s: %s: %s\n", program, what, strerror(error));
	return error == EAFNOSUPPORT ? 3 : 1;
}

static void write_result(const unsigned char *data, size_t length, int binary)
{
	if (binary) {
		fwrite(data, 1, length, stdout);
		return;
	}
	print_hex(stdout, data, length);
	fputc('\n', stdout);
}

static int one_shot(int argc, char **argv, int is_hash)
{
	int binary = strcmp(argv[argc - 1], "--binary") == 0;
	unsigned char *key = NULL, *iv = NULL, *data, *out;
	ssize_t key_length = 0, iv_length = 0, got;
	size_t length;
	int tfm, op, encrypt = 0;

	argc -= binary;
	if (is_hash ? argc != 3 : argc != 6)
		usage();
	if (!is_hash) {
		encrypt = strcmp(argv[3], "enc") == 0;
		if (!encrypt && strcmp(argv[3], "dec") != 0)
			usage();
		key_length = unhex(argv[4], &key);
		iv_length = unhex(argv[5], &iv);
		if (key_length < 0 || iv_length < 0)
			usage();
	}
	data = read_stream(stdin, &length);
	out = malloc(length + MAX_DIGEST);
	if (!data || !out)
		return fail("reading stdin", ENOMEM);
	tfm = bind_transform(is_hash ? "hash" : "skcipher", argv[2], key, (size_t)key_length);
	if (tfm < 0)
		return fail(argv[2], -tfm);
	op = open_request(tfm, length);
	if (op < 0)
		return fail(argv[2], -op);
	got = is_hash ? hash_request(op, data, length, out)
		      : cipher_request(op, encrypt, iv, (size_t)iv_length, data, length, out);
	if (got < 0)
		return fail(argv[2], (int)-got);
	write_result(out, (size_t)got, binary);
	return 0;
}

/* One batch line: the answer line goes to stdout whatever happens. */
static void batch_line(char *line)
{
	char *fields[7];
	int count = 0, is_hash, encrypt = 0, tfm, op;
	unsigned char *key = NULL, *iv = NULL, *data = NULL, *out = NULL;
	ssize_t key_length = 0, iv_length = 0, length, got = -EINVAL;
	char *save = NULL, *word;

	for (word = strtok_r(line, " \t\r\n", &save); word && count < 7;
	     word = strtok_r(NULL, " \t\r\n", &save))
		fields[count++] = word;
	if (!count)
		return;
	is_hash = strcmp(fields[0], "hash") == 0;
	if (is_hash ? (count != 3 && count != 4)
		    : (count != 6 || strcmp(fields[0], "skcipher") != 0)) {
		printf("error %d malformed request\n", EINVAL);
		return;
	}
	if (is_hash && count == 4)
		key_length = unhex(fields[2], &key);
	if (!is_hash) {
		encrypt = strcmp(fields[2], "enc") == 0;
		key_length = unhex(fields[3], &key);
		iv_length = unhex(fields[4], &iv);
	}
	length = unhex(fields[count - 1], &data);
	if (key_length < 0 || iv_length < 0 || length < 0) {
		printf("error %d malformed hex\n", EINVAL);
		goto out;
	}
	out = malloc((size_t)length + MAX_DIGEST);
	tfm = bind_transform(is_hash ? "hash" : "skcipher", fields[1], key_length ? key : NULL,
			     (size_t)key_length);
	if (tfm < 0) {
		printf("error %d bind %s\n", -tfm, fields[1]);
		goto out;
	}
	op = open_request(tfm, (size_t)length);
	if (op >= 0) {
		got = is_hash ? hash_request(op, data, (size_t)length, out)
			      : cipher_request(op, encrypt, iv, (size_t)iv_length, data,
					       (size_t)length, out);
		close(op);
	} else {
		got = op;
	}
	close(tfm);
	if (got < 0) {
		printf("error %d request %s\n", (int)-got, fields[1]);
		goto out;
	}
	fputs("ok ", stdout);
	print_hex(stdout, out, (size_t)got);
	fputc('\n', stdout);
out:
	free(key);
	free(iv);
	free(data);
	free(out);
}

static int batch(int argc, char **argv)
{
	FILE *input = stdin;
	char *line = NULL;
	size_t capacity = 0;

	if (argc > 3)
		usage();
	if (argc == 3 && strcmp(argv[2], "-") != 0) {
		input = fopen(argv[2], "r");
		if (!input)
			return fail(argv[2], errno);
	}
	while (getline(&line, &capacity, input) >= 0) {
		batch_line(line);
		fflush(stdout);
	}
	free(line);
	return 0;
}

static int speed(int argc, char **argv)
{
	int is_hash, tfm, op;
	unsigned char *key = NULL, *iv = NULL, *data, *out;
	ssize_t key_length = 0, iv_length = 0, got;
	long long bytes;
	double seconds;
	long before;
	int64_t start, last, now, deadline;
	unsigned long long ops = 0, ops_at_last = 0;

	if (argc < 6 || argc > 8)
		usage();
	is_hash = strcmp(argv[2], "hash") == 0;
	if (!is_hash && strcmp(argv[2], "skcipher") != 0)
		usage();
	bytes = atoll(argv[4]);
	seconds = strtod(argv[5], NULL);
	if (bytes <= 0 || seconds <= 0)
		usage();
	if (argc >= 7 && (key_length = unhex(argv[6], &key)) < 0)
		usage();
	if (argc == 8 && (iv_length = unhex(argv[7], &iv)) < 0)
		usage();
	data = calloc(1, (size_t)bytes);
	out = malloc((size_t)bytes + MAX_DIGEST);
	if (!data || !out)
		return fail("buffers", ENOMEM);
	before = refcnt_of(argv[3]);
	tfm = bind_transform(argv[2], argv[3], key, (size_t)key_length);
	if (tfm < 0)
		return fail(argv[3], -tfm);
	op = open_request(tfm, (size_t)bytes);
	if (op < 0)
		return fail(argv[3], -op);
	printf("bound %s %ld %ld\n", argv[3], before, refcnt_of(argv[3]));
	fflush(stdout);
	start = last = now_ns();
	deadline = start + (int64_t)(seconds * 1e9);
	do {
		got = is_hash ? hash_request(op, data, (size_t)bytes, out)
			      : cipher_request(op, 1, iv, (size_t)iv_length, data, (size_t)bytes,
					       out);
		if (got < 0)
			return fail(argv[3], (int)-got);
		ops++;
		now = now_ns();
		if (now - last >= SAMPLE_NS) {
			printf("sample %llu %lld %lld\n", ops - ops_at_last,
			       (long long)(ops - ops_at_last) * bytes, (long long)(now - last));
			fflush(stdout);
			ops_at_last = ops;
			last = now;
		}
	} while (now < deadline);
	printf("done %llu %lld %lld\n", ops, (long long)ops * bytes, (long long)(now - start));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "hash") == 0)
		return one_shot(argc, argv, 1);
	if (strcmp(argv[1], "skcipher") == 0)
		return one_shot(argc, argv, 0);
	if (strcmp(argv[1], "batch") == 0)
		return batch(argc, argv);
	if (strcmp(argv[1], "speed") == 0)
		return speed(argc, argv);
	usage();
	return 2;
}
