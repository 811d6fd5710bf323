#include "CBluetooth.h"
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int cbt_device_id(const char *name, int *error_out) {
    // hci_devid asks the kernel (HCIGETDEVLIST) and needs AF_BLUETOOTH; report the socket's errno when it fails.
    int probe = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (probe < 0) {
        *error_out = errno;
        return -1;
    }
    close(probe);
    errno = 0;
    int id = hci_devid(name);
    if (id < 0) {
        *error_out = errno != 0 ? errno : ENODEV;
    }
    return id;
}

int cbt_open_device(int dev_id, int *error_out) {
    int fd = hci_open_dev(dev_id);
    if (fd < 0) {
        *error_out = errno;
    }
    return fd;
}

int cbt_device_is_up(int fd, int dev_id, int *is_up) {
    struct hci_dev_info info;
    memset(&info, 0, sizeof(info));
    info.dev_id = (uint16_t)dev_id;
    if (ioctl(fd, HCIGETDEVINFO, (void *)&info) < 0) {
        return errno;
    }
    *is_up = hci_test_bit(HCI_UP, &info.flags) ? 1 : 0;
    return 0;
}

void cbt_close_device(int fd) {
    hci_close_dev(fd);
}
