#ifndef BEACONTRACKER_CBLUETOOTH_H
#define BEACONTRACKER_CBLUETOOTH_H
// libbluetooth (BlueZ) and the few macros Swift cannot import, wrapped as functions.
// Imported only by the BLEScanner target.
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

/// Resolves "hci0"-style names to a device id. Returns -1 and sets *error_out to an errno value on failure.
int cbt_device_id(const char *name, int *error_out);

/// Opens a raw HCI socket bound to device `dev_id`. Returns the descriptor, or -1 with *error_out set.
int cbt_open_device(int dev_id, int *error_out);

/// Reads the adapter's flags (HCIGETDEVINFO): *is_up is 1 when the adapter is up. Returns 0 or an errno value.
int cbt_device_is_up(int fd, int dev_id, int *is_up);

/// Closes a descriptor from cbt_open_device.
void cbt_close_device(int fd);

#endif
