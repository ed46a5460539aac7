"""Serial devices (USB CDC gloves, the UMI control board) opened the same way:
exclusive (a second program opening the port would steal bytes), short read timeout
so a stop request is seen within ``READ_TIMEOUT_S``."""
from __future__ import annotations

import os

import serial
from serial.tools import list_ports

READ_TIMEOUT_S = 0.05


def open_serial(path: str, baudrate: int = 115200) -> serial.Serial:
    """The port at ``path`` (a /dev/serial/by-id link, /dev/ttyACM0, a pty...), exclusive.

    Raises OSError (serial.SerialException) when it is absent or in use: the reconnect
    loop retries."""
    return serial.Serial(path, baudrate=baudrate, timeout=READ_TIMEOUT_S, exclusive=True)


def read_some(port: serial.Serial, limit: int = 4096) -> bytes:
    """What the port has (waits up to the read timeout for the first byte).

    An unplugged device shows as readable with no data: pyserial raises SerialException
    (an OSError), which ends the session."""
    waiting = port.in_waiting
    return port.read(min(max(waiting, 1), limit))


def usb_serial_number(path: str, ports=None) -> str | None:
    """The USB serial number of the device behind ``path`` (links resolved), None when it
    is not a USB device pyserial lists (a pty, a built-in UART)."""
    real = os.path.realpath(path)
    for p in list_ports.comports() if ports is None else ports:
        if os.path.realpath(p.device) == real:
            return p.serial_number or None
    return None
