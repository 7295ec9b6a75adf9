/* SPDX-License-Identifier: MIT */
/*
 * spin-firmware.S - a 64 KiB BIOS image for qemu-system-x86_64 that keeps
 * every virtual CPU busy forever, so that `qemu -smp N` has N vCPU threads
 * ("CPU 0/TCG", ...) burning CPU from the first millisecond, with no guest
 * kernel to boot (test-run-qemu.c, bench). Not a program of ours under
 * test: qemu is; this is its input.
 *
 * The boot CPU starts in real mode at the reset vector (the image's last
 * 16 bytes), enters flat 32-bit protected mode to reach its local APIC,
 * wakes the other CPUs with INIT and two STARTUPs (vector 0xF1: they begin
 * at 0xF1000, this image's offset 0x1000), and spins. They spin too.
 * The image is mapped at 0xFFFF0000 and, below 1 MiB, at 0xF0000.
 */
	.text
	.code16
start:
	cli
	lgdtl	%cs:(gdtr - start)
	movl	%cr0, %eax
	orl	$1, %eax
	movl	%eax, %cr0
	ljmpl	$0x08, $(0xF0000 + (pm32 - start))

	.code32
pm32:
	movw	$0x10, %ax
	movw	%ax, %ds
	movw	%ax, %es
	movw	%ax, %ss
	/* INIT to all but self (ICR: shorthand 11, level assert, INIT). */
	movl	$0, 0xFEE00310
	movl	$0x000C4500, 0xFEE00300
	movl	$200000, %ecx
1:	loop	1b
	/* STARTUP, vector 0xF1, twice as the book says. */
	movl	$0x000C46F1, 0xFEE00300
	movl	$200000, %ecx
2:	loop	2b
	movl	$0x000C46F1, 0xFEE00300
spin:
	jmp	spin

	.balign	8
gdt:
	.quad	0
	.quad	0x00CF9A000000FFFF	/* code: base 0, 4 GiB, 32-bit */
	.quad	0x00CF92000000FFFF	/* data: base 0, 4 GiB */
gdtr:
	.word	gdtr - gdt - 1
	.long	0xF0000 + (gdt - start)

	.code16
	.org	0x1000
ap:
	cli
3:	jmp	3b

	.org	0xFFF0
reset:
	ljmp	$0xF000, $0x0000
	.org	0x10000 - 1
	.byte	0
