#include "CBluetooth.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

// Test seam state. Guarded by one mutex: the scanner thread and a test thread may touch it at once.
static pthread_mutex_t injection_lock = PTHREAD_MUTEX_INITIALIZER;
static int injected_error[CBT_OP_COUNT];
static int injected_count[CBT_OP_COUNT];
static int call_count[CBT_OP_COUNT];
static int injected_fd = -1;
static uint16_t injected_opcode[8];
static uint8_t injected_status[8];

// Counts the call; returns an injected errno for it, or 0 to go on with the real call.
static int enter(cbt_op op) {
    pthread_mutex_lock(&injection_lock);
    call_count[op]++;
    int error = 0;
    if (injected_count[op] > 0) {
        injected_count[op]--;
        error = injected_error[op];
    }
    pthread_mutex_unlock(&injection_lock);
    return error;
}

static int seam_fd(void) {
    pthread_mutex_lock(&injection_lock);
    int fd = injected_fd;
    pthread_mutex_unlock(&injection_lock);
    return fd;
}

int cbt_device_id(const char *name, int *error_out) {
    int injected = enter(CBT_OP_DEVICE_ID);
    if (injected) { *error_out = injected; return -1; }
    if (seam_fd() >= 0) return 0;
    // hci_devid asks the kernel (HCIGETDEVLIST) and needs AF_BLUETOOTH; report the socket's errno when it fails.
    int probe = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (probe < 0) { *error_out = errno; return -1; }
    close(probe);
    errno = 0;
    int id = hci_devid(name);
    if (id < 0) *error_out = errno != 0 ? errno : ENODEV;
    return id;
}

int cbt_open_device(int dev_id, int *error_out) {
    int injected = enter(CBT_OP_OPEN);
    if (injected) { *error_out = injected; return -1; }
    int one = 1;
    int seam = seam_fd();
    // The seam's socket pair already stamps packets (SO_TIMESTAMP, set where it is made), as the HCI socket does with
    // HCI_TIME_STAMP below.
    if (seam >= 0) return dup(seam);
    int fd = hci_open_dev(dev_id);
    if (fd < 0) {
        *error_out = errno;
        return fd;
    }
    // Each packet then carries the time the kernel received it (a control message, read by cbt_read_packet). Without
    // it (an error here) the scanner stamps packets with the time of the read.
    setsockopt(fd, SOL_HCI, HCI_TIME_STAMP, &one, sizeof(one));
    // Room for the packets of a paused reader: the default (net.core.rmem_default, 208 KiB) holds about 300 small
    // events, 50 ms of a busy shop, and the kernel drops the rest unseen. 1 MiB (doubled by the kernel for its
    // bookkeeping) holds over a second of it. SO_RCVBUFFORCE passes net.core.rmem_max with CAP_NET_ADMIN, which the
    // agent has for scanning; without it SO_RCVBUF gives what rmem_max allows.
    int bytes = 1 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) != 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
    }
    return fd;
}

int cbt_device_is_up(int fd, int dev_id, int *is_up) {
    int injected = enter(CBT_OP_DEVICE_INFO);
    if (injected) return injected;
    if (seam_fd() >= 0) { *is_up = 1; return 0; }
    struct hci_dev_info info;
    memset(&info, 0, sizeof(info));
    info.dev_id = (uint16_t)dev_id;
    if (ioctl(fd, HCIGETDEVINFO, (void *)&info) < 0) return errno;
    *is_up = hci_test_bit(HCI_UP, &info.flags) ? 1 : 0;
    return 0;
}

int cbt_set_event_filter(int fd) {
    int injected = enter(CBT_OP_FILTER);
    if (injected) return injected;
    if (seam_fd() >= 0) return 0;
    struct hci_filter filter;
    hci_filter_clear(&filter);
    hci_filter_set_ptype(HCI_EVENT_PKT, &filter);
    hci_filter_set_event(EVT_LE_META_EVENT, &filter);
    hci_filter_set_event(EVT_CMD_COMPLETE, &filter);
    hci_filter_set_event(EVT_CMD_STATUS, &filter);
    hci_filter_set_event(EVT_HARDWARE_ERROR, &filter);
    if (setsockopt(fd, SOL_HCI, HCI_FILTER, &filter, sizeof(filter)) < 0) return errno;
    return 0;
}

int cbt_set_scan_parameters(int fd, int active, uint16_t interval, uint16_t window) {
    int injected = enter(CBT_OP_SCAN_PARAMETERS);
    if (injected) return injected;
    if (seam_fd() >= 0) return 0;
    // hci_le_set_scan_parameters converts interval and window to little endian (htobs) itself.
    if (hci_le_set_scan_parameters(fd, active ? 0x01 : 0x00, interval, window, LE_PUBLIC_ADDRESS, 0x00, 1000) < 0)
        return errno;
    return 0;
}

int cbt_set_scan_enable(int fd, int enable) {
    int injected = enter(CBT_OP_SCAN_ENABLE);
    if (injected) return injected;
    if (seam_fd() >= 0) return 0;
    if (hci_le_set_scan_enable(fd, enable ? 0x01 : 0x00, 0x00, 1000) < 0) return errno;
    return 0;
}

double cbt_control_timestamp(const void *control, size_t length) {
    struct msghdr message;
    memset(&message, 0, sizeof(message));
    message.msg_control = (void *)control;
    message.msg_controllen = length;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL;
         header = CMSG_NXTHDR(&message, header)) {
        int hci = header->cmsg_level == SOL_HCI && header->cmsg_type == HCI_CMSG_TSTAMP;
        int socket = header->cmsg_level == SOL_SOCKET && header->cmsg_type == SO_TIMESTAMP;
        if (!hci && !socket) continue;
        // The kernel's timeval of two longs: 16 bytes on 64-bit systems, 8 on 32-bit ones (armhf).
        size_t data = header->cmsg_len - CMSG_LEN(0);
        const unsigned char *bytes = CMSG_DATA(header);
        if (data == 2 * sizeof(int64_t)) {
            int64_t fields[2];
            memcpy(fields, bytes, sizeof(fields));
            return (double)fields[0] + (double)fields[1] / 1e6;
        }
        if (data == 2 * sizeof(int32_t)) {
            int32_t fields[2];
            memcpy(fields, bytes, sizeof(fields));
            return (double)fields[0] + (double)fields[1] / 1e6;
        }
    }
    return 0;
}

int cbt_read_packet(int fd, uint8_t *buffer, int capacity, int timeout_ms, double *time_out, int *error_out) {
    int injected = enter(CBT_OP_READ);
    if (injected) { *error_out = injected; return -1; }
    *time_out = 0;
    // One system call when a packet is waiting (the common case in a busy slice); poll only when none is.
    uint64_t control[16];
    struct iovec vector = {.iov_base = buffer, .iov_len = (size_t)capacity};
    struct msghdr message;
    memset(&message, 0, sizeof(message));
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    ssize_t length = recvmsg(fd, &message, MSG_DONTWAIT);
    if (length < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        if (timeout_ms == 0) return 0;
        struct pollfd descriptor = {.fd = fd, .events = POLLIN};
        int ready = poll(&descriptor, 1, timeout_ms);
        if (ready < 0) {
            if (errno == EINTR) return 0;
            *error_out = errno;
            return -1;
        }
        if (ready == 0) return 0;
        message.msg_controllen = sizeof(control);
        length = recvmsg(fd, &message, MSG_DONTWAIT);
        if (length < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    }
    if (length < 0) { *error_out = errno; return -1; }
    if (length == 0) { *error_out = ENODEV; return -1; }  // the other end went away (seam) or the device closed
    *time_out = cbt_control_timestamp(control, message.msg_controllen);
    return (int)length;
}

int cbt_send_command(int fd, uint16_t ogf, uint16_t ocf, const uint8_t *parameters, int length, uint8_t *response,
                     int capacity, int *response_length) {
    *response_length = 0;
    int injected = enter(CBT_OP_COMMAND);
    if (injected) return injected;
    if (length < 0 || length > 255 || capacity < 1) return EINVAL;
    uint16_t opcode = (uint16_t)(ogf << 10 | ocf);
    if (seam_fd() >= 0) {
        uint8_t packet[4 + 255];
        packet[0] = HCI_COMMAND_PKT;
        packet[1] = (uint8_t)(opcode & 0xFF);
        packet[2] = (uint8_t)(opcode >> 8);
        packet[3] = (uint8_t)length;
        if (length > 0) memcpy(packet + 4, parameters, (size_t)length);
        if (write(fd, packet, (size_t)(4 + length)) < 0) return errno;
        uint8_t status = 0;
        pthread_mutex_lock(&injection_lock);
        for (int i = 0; i < 8; i++) {
            if (injected_opcode[i] == opcode) status = injected_status[i];
        }
        pthread_mutex_unlock(&injection_lock);
        response[0] = status;
        *response_length = 1;
        return 0;
    }
    struct hci_request request;
    memset(&request, 0, sizeof(request));
    request.ogf = ogf;
    request.ocf = ocf;
    request.cparam = (void *)parameters;
    request.clen = length;
    request.rparam = response;
    request.rlen = capacity;
    if (hci_send_req(fd, &request, 1000) < 0) return errno != 0 ? errno : EIO;
    *response_length = request.rlen;
    return 0;
}

void cbt_inject_command_status(uint16_t opcode, uint8_t status) {
    pthread_mutex_lock(&injection_lock);
    int slot = -1;
    for (int i = 0; i < 8; i++) {
        if (injected_opcode[i] == opcode || (slot < 0 && injected_opcode[i] == 0)) slot = i;
        if (injected_opcode[i] == opcode) break;
    }
    if (slot >= 0) {
        injected_opcode[slot] = status == 0 ? 0 : opcode;
        injected_status[slot] = status;
    }
    pthread_mutex_unlock(&injection_lock);
}

void cbt_close_device(int fd) {
    close(fd);
}

void cbt_inject_error(cbt_op op, int error, int count) {
    pthread_mutex_lock(&injection_lock);
    injected_error[op] = error;
    injected_count[op] = count;
    pthread_mutex_unlock(&injection_lock);
}

void cbt_inject_descriptor(int fd) {
    pthread_mutex_lock(&injection_lock);
    injected_fd = fd;
    pthread_mutex_unlock(&injection_lock);
}

int cbt_call_count(cbt_op op) {
    pthread_mutex_lock(&injection_lock);
    int count = call_count[op];
    pthread_mutex_unlock(&injection_lock);
    return count;
}

void cbt_reset_injection(void) {
    pthread_mutex_lock(&injection_lock);
    memset(injected_error, 0, sizeof(injected_error));
    memset(injected_count, 0, sizeof(injected_count));
    memset(call_count, 0, sizeof(call_count));
    injected_fd = -1;
    memset(injected_opcode, 0, sizeof(injected_opcode));
    memset(injected_status, 0, sizeof(injected_status));
    pthread_mutex_unlock(&injection_lock);
}
