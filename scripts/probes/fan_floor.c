// Physical floor of an SSE fan-out on this machine: one event (FRAME bytes) written to N
// loopback TCP connections by WT writer threads, read by RT reader threads in another
// process (epoll), latency from the write loop's start to each arrival; p50/p99 over EV events.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#define FRAME 600
static int N, EV = 100, WT = 2, RT = 2;
static int *srv_fd, *cli_fd;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static volatile double *start_ts; // shared mmap
static double *lat; static int *lat_n;
static pthread_barrier_t bar;
typedef struct {int id;} arg_t;
static void *writer(void *p){int id=((arg_t*)p)->id; char buf[FRAME]; memset(buf,'x',FRAME); buf[FRAME-1]='\n';
  for(int e=0;e<EV;e++){ pthread_barrier_wait(&bar); for(int i=id;i<N;i+=WT){ if(write(srv_fd[i],buf,FRAME)!=FRAME){perror("write");exit(1);} } pthread_barrier_wait(&bar);} return 0;}
static void *reader(void *p){int id=((arg_t*)p)->id; int ep=epoll_create1(0); int mine=0;
  for(int i=id;i<N;i+=RT){struct epoll_event ev={.events=EPOLLIN,.data.u32=i}; epoll_ctl(ep,EPOLL_CTL_ADD,cli_fd[i],&ev); mine++;}
  int want=mine*EV, got=0; int *seen=calloc(N,sizeof(int)); char buf[65536]; struct epoll_event evs[256];
  while(got<want){int k=epoll_wait(ep,evs,256,-1); double t=now(); for(int j=0;j<k;j++){int i=evs[j].data.u32; int r=read(cli_fd[i],buf,sizeof buf); if(r<=0){perror("read");exit(1);} int frames=0; for(int b=0;b<r;b++) if(buf[b]=='\n') frames++; for(int f=0;f<frames;f++){ int e=seen[i]++; int idx=__sync_fetch_and_add(lat_n,1); lat[idx]=t-start_ts[e]; got++; }}}
  return 0;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){N=atoi(argv[1]); if(argc>2)WT=atoi(argv[2]); if(argc>3)RT=atoi(argv[3]);
  srv_fd=calloc(N,sizeof(int)); cli_fd=calloc(N,sizeof(int));
  int l=socket(AF_INET,SOCK_STREAM,0); struct sockaddr_in a={.sin_family=AF_INET,.sin_addr.s_addr=htonl(INADDR_LOOPBACK)}; int one=1; setsockopt(l,SOL_SOCKET,SO_REUSEADDR,&one,sizeof one);
  bind(l,(void*)&a,sizeof a); listen(l,4096); socklen_t al=sizeof a; getsockname(l,(void*)&a,&al);
  for(int i=0;i<N;i++){cli_fd[i]=socket(AF_INET,SOCK_STREAM,0); connect(cli_fd[i],(void*)&a,sizeof a); setsockopt(cli_fd[i],IPPROTO_TCP,TCP_NODELAY,&one,sizeof one); srv_fd[i]=accept(l,0,0); setsockopt(srv_fd[i],IPPROTO_TCP,TCP_NODELAY,&one,sizeof one);}
  start_ts=mmap(0,EV*sizeof(double),PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  lat=mmap(0,(size_t)N*EV*sizeof(double),PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  lat_n=mmap(0,sizeof(int),PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  pid_t pid=fork();
  if(pid==0){ pthread_t t[8]; arg_t ar[8]; for(int i=0;i<RT;i++){ar[i].id=i;pthread_create(&t[i],0,reader,&ar[i]);} for(int i=0;i<RT;i++)pthread_join(t[i],0); _exit(0);}
  usleep(100000);
  pthread_barrier_init(&bar,0,WT+1); pthread_t t[8]; arg_t ar[8]; for(int i=0;i<WT;i++){ar[i].id=i;pthread_create(&t[i],0,writer,&ar[i]);}
  for(int e=0;e<EV;e++){ start_ts[e]=now(); pthread_barrier_wait(&bar); pthread_barrier_wait(&bar); usleep(5000);}
  waitpid(pid,0,0);
  int n=*lat_n; qsort(lat,n,sizeof(double),cmp); printf("N=%d writers=%d readers=%d samples=%d p50=%.3f ms p99=%.3f ms max=%.3f ms\n",N,WT,RT,n,lat[n/2]/1e3,lat[(int)(n*0.99)]/1e3,lat[n-1]/1e3);
  return 0;}
