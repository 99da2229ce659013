/*
 * hex.h - the value of a hexadecimal digit, for the decoders of every
 * module (%XX in queries and forms, hex words, object names). Pure.
 */
#ifndef PASSAVANT_HEX_H
#define PASSAVANT_HEX_H

/* The value of the hex digit c (either case), or -1. */
static inline int hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
