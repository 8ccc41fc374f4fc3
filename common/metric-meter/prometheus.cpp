// The metrics registry and its Prometheus text rendering (metric-meter/prometheus.h).
#include <photon/common/metric-meter/prometheus.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace photon {
namespace metrics {

namespace {

bool valid_name(const char* s, bool colon) {
    if (!s || !*s) return false;
    for (const char* p = s; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                  (colon && c == ':') || (p != s && c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return true;
}

// A label value or HELP text, escaped as the format says (\\, \n, and \" in label values).
void append_escaped(std::string* out, const char* s, size_t n, bool quote) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\')
            *out += "\\\\";
        else if (c == '\n')
            *out += "\\n";
        else if (quote && c == '"')
            *out += "\\\"";
        else
            *out += c;
    }
}

void append_value(std::string* out, double v) {
    char buf[40];
    if (std::isnan(v))
        *out += "NaN";
    else if (std::isinf(v))
        *out += v > 0 ? "+Inf" : "-Inf";
    else {
        // The shortest of 15 to 17 digits that reads back the same: 1e-06, not 9.99...e-07.
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(buf, sizeof(buf), "%.*g", digits, v);
            if (strtod(buf, nullptr) == v) break;
        }
        *out += buf;
    }
}

struct entry {
    int id;
    Collector fn;
    void* arg;
    void (*drop)(void* arg);  // frees arg at unregistration (register_value's), or null
};

// One value exposed by register_value().
struct value_source {
    std::string name, help;
    Exposition::Type type;
    ValueReader read;
    void* arg;
    std::vector<Label> labels;

    static void collect(void* self, Exposition& out) {
        auto v = static_cast<value_source*>(self);
        out.family(v->name.c_str(), v->help.c_str(), v->type);
        out.sample(v->name.c_str(), v->read(v->arg), v->labels.data(), (int)v->labels.size());
    }
    static void drop(void* self) { delete static_cast<value_source*>(self); }
};

// Never destroyed: a server deleted by a static destructor may unregister after exit() began.
struct registry {
    std::mutex mu;
    std::vector<entry> collectors;
    int next_id = 0;
};
registry& reg() {
    static registry* r = new registry;
    return *r;
}

}  // namespace

bool valid_metric_name(const char* name) { return valid_name(name, true); }

void Exposition::metric(const char* name, const char* help, Type type, uint64_t value,
                        const Label* labels, int nlabels) {
    family(name, help, type);
    sample(name, value, labels, nlabels);
}

void Exposition::metric_by(const char* name, const char* help, Type type, const char* kind_label,
                           const char* const* kinds, const uint64_t* values, int n,
                           const Label* labels, int nlabels) {
    family(name, help, type);
    if (nlabels < 0 || nlabels > 3 || (nlabels && !labels)) {
        errors_++;
        return;
    }
    Label all[4];
    for (int i = 0; i < nlabels; i++) all[i] = labels[i];
    all[nlabels].name = kind_label;
    for (int i = 0; i < n; i++) {
        all[nlabels].value = kinds[i];
        sample(name, values[i], all, nlabels + 1);
    }
}

void Exposition::histogram_metric(const char* name, const char* help, const Log2Histogram& live,
                                  double scale, const Label* labels, int nlabels) {
    Log2Histogram h;
    live.snapshot(&h);
    family(name, help, HISTOGRAM);
    histogram(name, h, scale, labels, nlabels);
}

void Exposition::family(const char* name, const char* help, Type type) {
    if (!valid_metric_name(name)) {
        errors_++;
        return;
    }
    std::string key = std::string("\n") + name + "\n";
    if (("\n" + families_).find(key) != std::string::npos) return;
    families_ += name;
    families_ += '\n';
    *out_ += "# HELP ";
    *out_ += name;
    *out_ += ' ';
    if (help) append_escaped(out_, help, strlen(help), false);
    *out_ += "\n# TYPE ";
    *out_ += name;
    *out_ += type == COUNTER ? " counter\n" : type == GAUGE ? " gauge\n" : " histogram\n";
}

bool Exposition::begin(const char* name, const char* suffix, const Label* labels, int nlabels,
                       const Label* extra) {
    if (!valid_metric_name(name) || nlabels < 0 || nlabels > 4 || (nlabels && !labels)) {
        errors_++;
        return false;
    }
    for (int i = 0; i < nlabels; i++)
        if (!valid_name(labels[i].name, false) || !strcmp(labels[i].name, "le")) {
            errors_++;
            return false;
        }
    *out_ += name;
    *out_ += suffix;
    if (nlabels || extra) {
        *out_ += '{';
        for (int i = 0; i <= nlabels; i++) {
            const Label* l = i < nlabels ? &labels[i] : extra;
            if (!l) break;
            if (i) *out_ += ',';
            *out_ += l->name;
            *out_ += "=\"";
            append_escaped(out_, l->value.data(), l->value.size(), true);
            *out_ += '"';
        }
        *out_ += '}';
    }
    *out_ += ' ';
    return true;
}

void Exposition::sample(const char* name, double value, const Label* labels, int nlabels) {
    if (!begin(name, "", labels, nlabels, nullptr)) return;
    append_value(out_, value);
    *out_ += '\n';
}

void Exposition::sample(const char* name, uint64_t value, const Label* labels, int nlabels) {
    if (!begin(name, "", labels, nlabels, nullptr)) return;
    *out_ += std::to_string(value);
    *out_ += '\n';
}

void Exposition::sample(const char* name, int64_t value, const Label* labels, int nlabels) {
    if (!begin(name, "", labels, nlabels, nullptr)) return;
    *out_ += std::to_string(value);
    *out_ += '\n';
}

void Exposition::histogram(const char* name, const Log2Histogram& h, double scale,
                           const Label* labels, int nlabels) {
    uint64_t cumulative = 0;
    for (int i = 0; i < Log2Histogram::kBuckets; i++) {
        cumulative += h.buckets[i];
        Label le{"le", {}};
        if (i == Log2Histogram::kBuckets - 1) {
            le.value = "+Inf";
            cumulative = h.count > cumulative ? h.count : cumulative;
        } else {
            std::string v;
            append_value(&v, std::ldexp(1.0, i) * scale);
            le.value = v;
        }
        if (!begin(name, "_bucket", labels, nlabels, &le)) return;
        *out_ += std::to_string(cumulative);
        *out_ += '\n';
    }
    if (!begin(name, "_sum", labels, nlabels, nullptr)) return;
    append_value(out_, (double)h.sum * scale);
    *out_ += '\n';
    if (!begin(name, "_count", labels, nlabels, nullptr)) return;
    *out_ += std::to_string(cumulative);  // the +Inf bucket's, as the format requires
    *out_ += '\n';
}

int register_collector(Collector fn, void* arg) {
    if (!fn) return errno = EINVAL, -1;
    registry& r = reg();
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto& e : r.collectors)
        if (e.fn == fn && e.arg == arg) return e.id;
    r.collectors.push_back({++r.next_id, fn, arg, nullptr});
    return r.next_id;
}

int register_value(const char* name, const char* help, Exposition::Type type, ValueReader read,
                   void* arg, const Label* labels, int nlabels) {
    if (!name || !valid_metric_name(name) || !read || type == Exposition::HISTOGRAM ||
        nlabels < 0 || nlabels > 4 || (nlabels && !labels))
        return errno = EINVAL, -1;
    for (int i = 0; i < nlabels; i++)
        if (!labels[i].name || !valid_name(labels[i].name, false)) return errno = EINVAL, -1;
    auto v = new value_source{
        name, help ? help : "", type, read, arg, std::vector<Label>(labels, labels + nlabels)};
    registry& r = reg();
    std::lock_guard<std::mutex> lock(r.mu);
    r.collectors.push_back({++r.next_id, &value_source::collect, v, &value_source::drop});
    return r.next_id;
}

int unregister_collector(int id) {
    registry& r = reg();
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto it = r.collectors.begin(); it != r.collectors.end(); ++it)
        if (it->id == id) {
            if (it->drop) it->drop(it->arg);
            r.collectors.erase(it);
            return 0;
        }
    return errno = ENOENT, -1;
}

int render_prometheus(std::string* out) {
    if (!out) return errno = EINVAL, -1;
    Exposition e(out);
    registry& r = reg();
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto& c : r.collectors) c.fn(c.arg, e);
    return 0;
}

}  // namespace metrics
}  // namespace photon
