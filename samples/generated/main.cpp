// classify_iris: the Iris sample model (samples/models/iris) as generated C++. iris.hpp and
// iris.cpp are written at build time by graft_generate_model (see CMakeLists.txt); IRIS_WEIGHTS
// is the path of the weights file it generated.
//
//   classify_iris 5.1 3.5 1.4 0.2      sepal length, sepal width, petal length, petal width (cm)
//   classify_iris 5.1 3.5 1.4 0.2 6.5 3.0 5.8 2.2 ...   several flowers: one line each
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "iris.hpp"

int main(int argc, char** argv) {
    static const char* const species[] = {"setosa", "versicolor", "virginica"};
    std::vector<float> flowers{5.1f, 3.5f, 1.4f, 0.2f};
    if (argc > 1 && (argc - 1) % 4 == 0) {
        flowers.clear();
        for (int i = 1; i < argc; ++i) flowers.push_back(std::strtof(argv[i], nullptr));
    } else if (argc != 1) {
        std::fprintf(stderr, "usage: %s [sepal_length sepal_width petal_length petal_width]...\n", argv[0]);
        return 2;
    }
    try {
        iris::Session session(IRIS_WEIGHTS);  // checks the weights file's size and checksum
        const std::size_t n = flowers.size() / 4;
        for (std::size_t f = 0; f < n; ++f) {
            float probabilities[3];  // iris::kOutputs[0].size
            session.infer(&flowers[4 * f], probabilities);
            int best = 0;
            for (int i = 1; i < 3; ++i)
                if (probabilities[i] > probabilities[best]) best = i;
            if (n > 1) {  // one line per flower
                std::printf("  flower %zu: %s (p = %.4f)\n", f, species[best], static_cast<double>(probabilities[best]));
                continue;
            }
            for (int i = 0; i < 3; ++i) std::printf("%-10s %.4f\n", species[i], static_cast<double>(probabilities[i]));
            std::printf("-> %s\n", species[best]);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "classify_iris: %s\n", e.what());
        return 1;
    }
    return 0;
}
