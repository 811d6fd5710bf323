#ifndef BEACONTRACKER_CMOSQUITTO_H
#define BEACONTRACKER_CMOSQUITTO_H
// libmosquitto, imported only by the BeaconMQTT target.
#include <mosquitto.h>
#endif
