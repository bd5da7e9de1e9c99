/*
 * attach_elf.c - read what the injector needs from a mapped ELF file (as
 * the target sees it, through /proc/PID/root): one dynamic symbol, and
 * the unused tail of the last page of its code segment.  64-bit
 * little-endian x86-64 files only; every offset is checked against the
 * file's size.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach-internal.h"

struct elf_file {
	const unsigned char *data;
	size_t size;
	const Elf64_Ehdr *eh;
};

static int elf_open(const char *path, struct elf_file *f, char *err,
		    size_t errlen)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		snprintf(err, errlen, "%s is too short to be an ELF file",
			 path);
		close(fd);
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "cannot map %s: %s", path,
			 strerror(errno));
		return -1;
	}
	f->data = p;
	f->size = (size_t)st.st_size;
	f->eh = p;
	if (memcmp(f->eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    f->eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    f->eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    f->eh->e_machine != EM_X86_64) {
		snprintf(err, errlen,
			 "%s is not a 64-bit x86-64 ELF file (byte 0)", path);
		munmap((void *)f->data, f->size);
		return -1;
	}
	return 0;
}

static void elf_close(struct elf_file *f)
{
	munmap((void *)f->data, f->size);
}

/* 1 when [off, off + count * size) lies inside the file. */
static int in_file(const struct elf_file *f, uint64_t off, uint64_t count,
		   uint64_t size)
{
	return off <= f->size && (size == 0 || count <= (f->size - off) / size);
}

int attach_elf_symbol(const char *path, const char *name, uint64_t *value,
		      char *err, size_t errlen)
{
	struct elf_file f;
	const Elf64_Shdr *sh;
	int rc = -1;

	if (elf_open(path, &f, err, errlen) < 0)
		return -1;
	if (f.eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(&f, f.eh->e_shoff, f.eh->e_shnum, sizeof(Elf64_Shdr))) {
		snprintf(err, errlen,
			 "%s has a section table outside the file (byte %llu)",
			 path, (unsigned long long)f.eh->e_shoff);
		goto out;
	}
	sh = (const Elf64_Shdr *)(f.data + f.eh->e_shoff);
	for (unsigned i = 0; i < f.eh->e_shnum && rc < 0; i++) {
		const Elf64_Shdr *str;
		const Elf64_Sym *sym;
		uint64_t n;

		if (sh[i].sh_type != SHT_DYNSYM ||
		    sh[i].sh_link >= f.eh->e_shnum)
			continue;
		str = &sh[sh[i].sh_link];
		n = sh[i].sh_size / sizeof(Elf64_Sym);
		if (!in_file(&f, sh[i].sh_offset, n, sizeof(Elf64_Sym)) ||
		    !in_file(&f, str->sh_offset, str->sh_size, 1))
			break;
		sym = (const Elf64_Sym *)(f.data + sh[i].sh_offset);
		for (uint64_t k = 0; k < n; k++) {
			const char *s;

			if (sym[k].st_name >= str->sh_size ||
			    sym[k].st_shndx == SHN_UNDEF || !sym[k].st_value)
				continue;
			s = (const char *)f.data + str->sh_offset +
			    sym[k].st_name;
			if (strnlen(s, str->sh_size - sym[k].st_name) <
				str->sh_size - sym[k].st_name &&
			    strcmp(s, name) == 0) {
				*value = sym[k].st_value;
				rc = 0;
				break;
			}
		}
	}
	if (rc < 0)
		snprintf(err, errlen, "%s has no dynamic symbol %s", path,
			 name);
out:
	elf_close(&f);
	return rc;
}

int attach_elf_code_slack(const char *path, uint64_t *end, uint64_t *page_end,
			  char *err, size_t errlen)
{
	struct elf_file f;
	const Elf64_Phdr *ph;
	int rc = -1;

	if (elf_open(path, &f, err, errlen) < 0)
		return -1;
	if (f.eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !in_file(&f, f.eh->e_phoff, f.eh->e_phnum, sizeof(Elf64_Phdr))) {
		snprintf(err, errlen,
			 "%s has a program header table outside the file "
			 "(byte %llu)",
			 path, (unsigned long long)f.eh->e_phoff);
		goto out;
	}
	ph = (const Elf64_Phdr *)(f.data + f.eh->e_phoff);
	for (unsigned i = 0; i < f.eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			*end = ph[i].p_vaddr + ph[i].p_memsz;
			*page_end = (*end + 4095) & ~(uint64_t)4095;
			rc = 0;
		}
	if (rc < 0)
		snprintf(err, errlen, "%s has no executable segment", path);
out:
	elf_close(&f);
	return rc;
}
