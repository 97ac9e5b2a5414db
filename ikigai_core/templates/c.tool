/* The {{name}} tool: shout TEXT back in capitals.
 * Build it: cc -o {{program}} {{program}}.c
 * Try it: ikigai tool test {{name}} '{"text": "hi"}'
 * A small JSON reader for the one object on stdin: strings, integers, and skipping the rest. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *SCHEMA =
    "{\"name\": \"{{name}}\", \"description\": \"Shout TEXT back in capitals.\",\n"
    " \"parameters\": {\"type\": \"object\", \"required\": [\"text\"], \"properties\": {\n"
    "   \"text\": {\"type\": \"string\", \"description\": \"what to shout.\"},\n"
    "   \"times\": {\"type\": \"integer\", \"description\": \"how many times to say it.\","
    " \"default\": 1}}}}\n";
static const char *USAGE = "usage: {{program}} [--schema] < ARGUMENTS.json";

static void fail(const char *message, int status) {
    fprintf(stderr, "{{name}}: %s\n", message);
    exit(status);
}

static const char *ws(const char *p) {
    while (*p && isspace((unsigned char)*p)) p++;
    return p;
}

/* Parse the string at p (after its quote) into out (may be NULL); return the end. */
static const char *string(const char *p, char *out) {
    size_t n = 0;
    for (; *p && *p != '"'; p++) {
        char c = *p;
        if (c == '\\') {
            c = *++p;
            if (c == 'n') c = '\n'; else if (c == 't') c = '\t'; else if (c == 'r') c = '\r';
            else if (c == 'b') c = '\b'; else if (c == 'f') c = '\f';
            else if (c == 'u') { c = '?'; for (int i = 0; i < 4 && p[1]; i++) p++; }
            else if (!c) break;
        }
        if (out) out[n++] = c;
    }
    if (*p != '"') fail("invalid JSON on stdin: unterminated string", 1);
    if (out) out[n] = 0;
    return p + 1;
}

/* Skip one value of any kind; return its end. */
static const char *skip(const char *p) {
    int depth = 0;
    do {
        p = ws(p);
        if (*p == '"') { p = string(p + 1, NULL); }
        else if (*p == '{' || *p == '[') { depth++; p++; }
        else if (*p == '}' || *p == ']') { depth--; p++; }
        else if (*p == ',' || *p == ':') { p++; }
        else if (*p) { while (*p && !strchr(",:]} \t\r\n", *p)) p++; }
        else fail("invalid JSON on stdin: it ends too soon", 1);
    } while (depth > 0);
    return p;
}

int main(int argc, char **argv) {
    if (argc > 1) {
        if (!strcmp(argv[1], "--schema")) { fputs(SCHEMA, stdout); return 0; }
        if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) { puts(USAGE); return 0; }
        fprintf(stderr, "{{name}}: unexpected argument '%s'; %s\n", argv[1], USAGE);
        return 2;
    }
    size_t size = 0, got;
    char *input = malloc(1 << 16);
    while (input && (got = fread(input + size, 1, 65535 - size, stdin)) > 0) size += got;
    if (!input) fail("out of memory", 1);
    input[size] = 0;
    const char *p = ws(input);
    if (!*p) fail("expected a JSON object on stdin, got nothing", 1);
    if (*p != '{') fail("expected a JSON object on stdin", 1);
    char *text = NULL;
    long times = 1;
    p = ws(p + 1);
    while (*p && *p != '}') {
        char key[64] = "";
        if (*p != '"') fail("invalid JSON on stdin: expected a key", 1);
        const char *end = string(p + 1, NULL);
        if (end - p - 2 < (long)sizeof key) string(p + 1, key);
        p = ws(end);
        if (*p++ != ':') fail("invalid JSON on stdin: expected ':'", 1);
        p = ws(p);
        if (!strcmp(key, "text") && strncmp(p, "null", 4)) {
            if (*p != '"') fail("field 'text' must be a string", 1);
            text = malloc(size + 1);
            p = string(p + 1, text);
        } else if (!strcmp(key, "times") && strncmp(p, "null", 4)) {
            char *stop;
            times = strtol(p, &stop, 10);
            if (stop == p || strchr(".eE", *stop) || times < 0)
                fail("field 'times' must be an integer", 1);
            p = stop;
        } else {
            p = skip(p);
        }
        p = ws(p);
        if (*p == ',') p = ws(p + 1);
    }
    if (!text) fail("missing required field 'text'", 1);
    const char *s = text;
    while (*s && isspace((unsigned char)*s)) s++;
    if (!*s) {
        fputs("{\"error\": \"text is empty: give some words to shout\", "
              "\"error_code\": \"EMPTY_TEXT\"}", stdout);
        return 0;
    }
    fputs("{\"output\": \"", stdout);
    for (long i = 0; i < times; i++) {
        if (i) putchar(' ');
        for (s = text; *s; s++) {
            unsigned char c = (unsigned char)toupper((unsigned char)*s);
            if (c == '"' || c == '\\') printf("\\%c", c);
            else if (c < 0x20) printf("\\u%04x", c);
            else putchar(c);
        }
    }
    fputs("\"}", stdout);
    return 0;
}
