// LD_PRELOAD helper for btvirt on kernels without AF_ALG (kernel crypto sockets).
//
// btvirt (Debian bluez-test-tools) opens AF_ALG sockets ("ecb(aes)", "cmac(aes)") for every emulated controller it
// creates, and drops the client when that fails. The agent's tests use scanning and legacy advertising only, which
// never encrypt, so this shim answers those sockets with Unix socket pairs: socket, bind, setsockopt and accept
// succeed; an actual encryption (LE Encrypt, pairing) would get no answer. Built by scripts/btvirt/build-shim.sh.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

#define MAX_FD 4096
static atomic_char alg_fd[MAX_FD];

static int is_alg(int fd) { return fd >= 0 && fd < MAX_FD && atomic_load(&alg_fd[fd]); }

static int pair_end(int type) {
    int fds[2];
    if (socketpair(AF_UNIX, (type & ~0xF) | SOCK_SEQPACKET, 0, fds) < 0) return -1;
    // The other end stays open (and leaks, a few per emulated controller) so reads block rather than fail.
    if (fds[0] < MAX_FD) atomic_store(&alg_fd[fds[0]], 1);
    return fds[0];
}

int socket(int domain, int type, int protocol) {
    static int (*real)(int, int, int);
    if (!real) real = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
    if (domain == AF_ALG) return pair_end(type);
    return real(domain, type, protocol);
}

int bind(int fd, const struct sockaddr *address, socklen_t length) {
    static int (*real)(int, const struct sockaddr *, socklen_t);
    if (!real) real = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
    if (is_alg(fd)) return 0;
    return real(fd, address, length);
}

int setsockopt(int fd, int level, int name, const void *value, socklen_t length) {
    static int (*real)(int, int, int, const void *, socklen_t);
    if (!real) real = (int (*)(int, int, int, const void *, socklen_t))dlsym(RTLD_NEXT, "setsockopt");
    if (is_alg(fd) || level == SOL_ALG) return 0;
    return real(fd, level, name, value, length);
}

int accept(int fd, struct sockaddr *address, socklen_t *length) {
    static int (*real)(int, struct sockaddr *, socklen_t *);
    if (!real) real = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "accept");
    if (is_alg(fd)) return pair_end(SOCK_CLOEXEC);
    return real(fd, address, length);
}

int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags) {
    static int (*real)(int, struct sockaddr *, socklen_t *, int);
    if (!real) real = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(RTLD_NEXT, "accept4");
    if (is_alg(fd)) return pair_end(flags);
    return real(fd, address, length, flags);
}

int close(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "close");
    if (fd >= 0 && fd < MAX_FD) atomic_store(&alg_fd[fd], 0);
    return real(fd);
}
