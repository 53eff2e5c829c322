#ifndef WHEREABOUTS_CBLUEZ_SHIM_H
#define WHEREABOUTS_CBLUEZ_SHIM_H
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#endif
