#ifndef BEACONTRACKER_CBLUETOOTH_H
#define BEACONTRACKER_CBLUETOOTH_H
// libbluetooth (BlueZ) and the few macros Swift cannot import, wrapped as functions.
// Imported only by the BLEScanner target.
//
// Every OS call the scanner makes goes through one of these functions, so tests can inject the OS's errors and feed
// recorded HCI bytes through the same read path on machines without Bluetooth (cbt_inject_*).
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

/// The shim's operations, for error injection and call counting.
typedef enum {
    CBT_OP_DEVICE_ID = 0,
    CBT_OP_OPEN,
    CBT_OP_DEVICE_INFO,
    CBT_OP_FILTER,
    CBT_OP_SCAN_PARAMETERS,
    CBT_OP_SCAN_ENABLE,
    CBT_OP_READ,
    CBT_OP_COMMAND,
    CBT_OP_COUNT
} cbt_op;

/// Resolves "hci0"-style names to a device id. Returns -1 and sets *error_out to an errno value on failure.
int cbt_device_id(const char *name, int *error_out);

/// Opens a raw HCI socket bound to device `dev_id`. Returns the descriptor, or -1 with *error_out set.
int cbt_open_device(int dev_id, int *error_out);

/// Reads the adapter's flags (HCIGETDEVINFO): *is_up is 1 when the adapter is up. Returns 0 or an errno value.
int cbt_device_is_up(int fd, int dev_id, int *is_up);

/// Lets only HCI events through to this socket (LE meta events and command status/complete). Returns 0 or errno.
int cbt_set_event_filter(int fd);

/// LE Set Scan Parameters: active (1) or passive (0), interval and window in 0.625 ms units. Returns 0 or errno.
int cbt_set_scan_parameters(int fd, int active, uint16_t interval, uint16_t window);

/// LE Set Scan Enable with duplicate filtering off (every advertisement is reported). Returns 0 or errno.
int cbt_set_scan_enable(int fd, int enable);

/// Waits up to timeout_ms for one HCI packet and reads it. Returns its length, 0 on timeout, -1 with *error_out.
/// *time_out is when the kernel received the packet (seconds since 1970, from its timestamp control message), or 0
/// when the packet carried none.
int cbt_read_packet(int fd, uint8_t *buffer, int capacity, int timeout_ms, double *time_out, int *error_out);

/// The receive time in a recvmsg control buffer: an HCI_CMSG_TSTAMP (HCI socket with HCI_TIME_STAMP) or SO_TIMESTAMP
/// message, with the kernel's 64-bit or 32-bit timeval. 0 when there is none.
double cbt_control_timestamp(const void *control, size_t length);

/// Sends an HCI command and waits (1 s at most) for its Command Complete; its return parameters (status first) go to
/// `response` (up to `capacity` bytes, *response_length set). Returns 0, or an errno value (ETIMEDOUT: no answer).
/// Under the test seam the command's H4 packet is written to the seam's socket, for the test to read at the other end,
/// and the answer is the status injected for its opcode (cbt_inject_command_status), else success.
int cbt_send_command(int fd, uint16_t ogf, uint16_t ocf, const uint8_t *parameters, int length, uint8_t *response,
                     int capacity, int *response_length);

/// Test seam: commands with `opcode` answer with `status` (0 clears it). Up to 8 opcodes.
void cbt_inject_command_status(uint16_t opcode, uint8_t status);

/// Closes a descriptor from cbt_open_device.
void cbt_close_device(int fd);

/// Test seam: the next `count` calls of `op` fail with `error` (an errno value).
void cbt_inject_error(cbt_op op, int error, int count);

/// Test seam: device lookup and open succeed and return `fd` (e.g. a pipe's read end carrying recorded H4 packets);
/// the adapter reports up; filter and scan commands succeed without touching `fd`. -1 turns the seam off.
void cbt_inject_descriptor(int fd);

/// How often `op` was called since the last reset (tests check that scan state was restored).
int cbt_call_count(cbt_op op);

/// Clears every injection and counter.
void cbt_reset_injection(void);

#endif
